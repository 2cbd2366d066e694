<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The payment that paid a link.
 *
 * @property-read string $id
 * @property-read string $amount
 * @property-read string $currency
 * @property-read string $customerName
 * @property-read string $customerEmail
 * @property-read ?string $paidAt
 */
final class PaymentLinkTransaction extends Model
{
    public const SCHEMA = '#/components/schemas/PaymentLinkCheck/properties/transaction';
    public const FIELDS = ['id', 'amount', 'currency', 'customerName', 'customerEmail', 'paidAt'];
}
