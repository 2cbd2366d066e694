<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The ways to pay a session.
 *
 * @property-read string $id
 * @property-read string $currency
 * @property-read list<Method> $methods
 */
final class MethodList extends Model
{
    public const SCHEMA = '#/components/schemas/MethodList';
    public const FIELDS = ['id', 'currency', 'methods'];
    public const NESTED = ['methods' => Method::class];
}
