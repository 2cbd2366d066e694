<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The results of a batch of transfers, one per item in order.
 *
 * @property-read string $object
 * @property-read int $count
 * @property-read int $created
 * @property-read int $replayed
 * @property-read int $refused
 * @property-read list<TransferBatchItem> $data
 */
final class TransferBatch extends Model
{
    public const SCHEMA = '#/components/schemas/TransferBatch';
    public const FIELDS = ['object', 'count', 'created', 'replayed', 'refused', 'data'];
    public const NESTED = ['data' => TransferBatchItem::class];
}
