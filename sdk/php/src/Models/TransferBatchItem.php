<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * One item's result in a batch.
 *
 * @property-read int $index
 * @property-read int $status
 * @property-read bool $replayed
 * @property-read ?Transfer $transfer
 * @property-read ?string $error
 * @property-read ?string $code
 */
final class TransferBatchItem extends Model
{
    public const SCHEMA = '#/components/schemas/TransferBatch/properties/data/items';
    public const FIELDS = ['index', 'status', 'replayed', 'transfer', 'error', 'code'];
    public const NESTED = ['transfer' => Transfer::class];
}
