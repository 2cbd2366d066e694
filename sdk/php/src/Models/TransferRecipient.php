<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The holder of a Mobile Money account, before a payout.
 *
 * @property-read string $object
 * @property-read string $country
 * @property-read string $operator
 * @property-read string $phone
 * @property-read ?string $name
 * @property-read bool $name_available
 * @property-read ?string $unavailable_reason
 * @property-read ?string $provider
 */
final class TransferRecipient extends Model
{
    public const SCHEMA = '#/components/schemas/TransferRecipient';
    public const FIELDS = ['object', 'country', 'operator', 'phone', 'name', 'name_available', 'unavailable_reason', 'provider'];
}
