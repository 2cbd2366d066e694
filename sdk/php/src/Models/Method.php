<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * One way to pay (a Mobile Money operator or a card method).
 *
 * @property-read string $code
 * @property-read string $gatewayId
 * @property-read string $name
 * @property-read string $provider
 * @property-read string $country
 * @property-read string $type
 * @property-read string $flag
 * @property-read string $logo
 */
final class Method extends Model
{
    public const SCHEMA = '#/components/schemas/Method';
    public const FIELDS = ['code', 'gatewayId', 'name', 'provider', 'country', 'type', 'flag', 'logo'];
}
