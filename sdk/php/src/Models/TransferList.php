<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The latest transfers.
 *
 * @property-read string $object
 * @property-read list<Transfer> $data
 * @property-read int $count
 */
final class TransferList extends Model
{
    public const SCHEMA = '#/components/schemas/TransferList';
    public const FIELDS = ['object', 'data', 'count'];
    public const NESTED = ['data' => Transfer::class];
}
