<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * Whether a payment link was paid.
 *
 * @property-read bool $success
 * @property-read bool $paid
 * @property-read string $status
 * @property-read ?PaymentLinkTransaction $transaction
 */
final class PaymentLinkCheck extends Model
{
    public const SCHEMA = '#/components/schemas/PaymentLinkCheck';
    public const FIELDS = ['success', 'paid', 'status', 'transaction'];
    public const NESTED = ['transaction' => PaymentLinkTransaction::class];
}
