<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A payout to a Mobile Money account.
 *
 * @property-read string $id
 * @property-read string $object
 * @property-read string $reference
 * @property-read string $status
 * @property-read string $amount
 * @property-read string $currency
 * @property-read string $fee
 * @property-read string $country
 * @property-read string $operator
 * @property-read string $provider_operator
 * @property-read string $phone
 * @property-read ?string $recipient_name
 * @property-read ?string $description
 * @property-read string $provider
 * @property-read ?string $failure_code
 * @property-read ?string $failure_message
 * @property-read bool $livemode
 * @property-read string $created_at
 * @property-read string $updated_at
 * @property-read ?string $completed_at
 * @property-read ?bool $recipient_name_checked
 * @property-read ?string $recipient_name_reported
 */
final class Transfer extends Model
{
    public const SCHEMA = '#/components/schemas/Transfer';
    public const FIELDS = ['id', 'object', 'reference', 'status', 'amount', 'currency', 'fee', 'country', 'operator', 'provider_operator', 'phone', 'recipient_name', 'description', 'provider', 'failure_code', 'failure_message', 'livemode', 'created_at', 'updated_at', 'completed_at', 'recipient_name_checked', 'recipient_name_reported'];
}
