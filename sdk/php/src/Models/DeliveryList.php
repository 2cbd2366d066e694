<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * Webhook deliveries, newest first.
 *
 * @property-read string $object
 * @property-read list<Delivery> $data
 * @property-read int $count
 */
final class DeliveryList extends Model
{
    public const SCHEMA = '#/components/schemas/DeliveryList';
    public const FIELDS = ['object', 'data', 'count'];
    public const NESTED = ['data' => Delivery::class];
}
