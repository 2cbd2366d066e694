<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A checkout session.
 *
 * @property-read string $id
 * @property-read string $object
 * @property-read string $url
 * @property-read bool $livemode
 * @property-read string $status
 * @property-read bool $paid
 * @property-read string $amount
 * @property-read string $currency
 * @property-read ?string $order_id
 * @property-read ?string $customer_name
 * @property-read ?string $customer_email
 * @property-read ?string $customer_phone
 * @property-read ?string $description
 * @property-read ?string $success_url
 * @property-read ?string $cancel_url
 * @property-read ?string $merchant_name
 * @property-read ?string $merchant_logo
 * @property-read array<string,string> $metadata
 * @property-read ?string $provider
 * @property-read string $created_at
 * @property-read string $updated_at
 * @property-read ?string $completed_at
 * @property-read string $expires_at
 * @property-read ?string $amount_refunded
 * @property-read ?Refund $refund
 */
final class Session extends Model
{
    public const SCHEMA = '#/components/schemas/Session';
    public const FIELDS = ['id', 'object', 'url', 'livemode', 'status', 'paid', 'amount', 'currency', 'order_id', 'customer_name', 'customer_email', 'customer_phone', 'description', 'success_url', 'cancel_url', 'merchant_name', 'merchant_logo', 'metadata', 'provider', 'created_at', 'updated_at', 'completed_at', 'expires_at', 'amount_refunded', 'refund'];
    public const NESTED = ['refund' => Refund::class];
}
