<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * Money given back to the payer of a successful payment.
 *
 * @property-read string $id
 * @property-read string $object
 * @property-read string $transaction_id
 * @property-read string $amount
 * @property-read string $currency
 * @property-read string $status
 * @property-read ?string $failure_code
 * @property-read ?string $failure_message
 * @property-read string $method
 * @property-read ?string $reason
 * @property-read string $provider
 * @property-read ?string $transfer_id
 * @property-read bool $livemode
 * @property-read string $created_at
 * @property-read string $updated_at
 * @property-read ?string $completed_at
 */
final class Refund extends Model
{
    public const SCHEMA = '#/components/schemas/Refund';
    public const FIELDS = ['id', 'object', 'transaction_id', 'amount', 'currency', 'status', 'failure_code', 'failure_message', 'method', 'reason', 'provider', 'transfer_id', 'livemode', 'created_at', 'updated_at', 'completed_at'];
}
