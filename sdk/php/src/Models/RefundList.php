<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A page of refunds.
 *
 * @property-read string $object
 * @property-read list<Refund> $data
 * @property-read int $count
 */
final class RefundList extends Model
{
    public const SCHEMA = '#/components/schemas/RefundList';
    public const FIELDS = ['object', 'data', 'count'];
    public const NESTED = ['data' => Refund::class];
}
