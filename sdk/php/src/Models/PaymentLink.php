<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A reusable page collecting a fixed amount.
 *
 * @property-read bool $success
 * @property-read string $id
 * @property-read string $url
 * @property-read string $slug
 * @property-read string $amount
 * @property-read string $currency
 * @property-read string $title
 * @property-read bool $active
 * @property-read ?string $expires_at
 * @property-read ?int $max_payments
 * @property-read ?string $phone
 * @property-read array<string,string> $metadata
 * @property-read int $completed_payments
 * @property-read string $created_at
 */
final class PaymentLink extends Model
{
    public const SCHEMA = '#/components/schemas/PaymentLink';
    public const FIELDS = ['success', 'id', 'url', 'slug', 'amount', 'currency', 'title', 'active', 'expires_at', 'max_payments', 'phone', 'metadata', 'completed_payments', 'created_at'];
}
