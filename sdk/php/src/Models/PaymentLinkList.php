<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A page of payment links.
 *
 * @property-read string $object
 * @property-read list<PaymentLink> $data
 * @property-read int $count
 * @property-read bool $has_more
 */
final class PaymentLinkList extends Model
{
    public const SCHEMA = '#/components/schemas/PaymentLinkList';
    public const FIELDS = ['object', 'data', 'count', 'has_more'];
    public const NESTED = ['data' => PaymentLink::class];
}
