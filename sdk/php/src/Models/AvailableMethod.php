<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A method and the providers serving it.
 *
 * @property-read string $method
 * @property-read list<string> $providers
 */
final class AvailableMethod extends Model
{
    public const SCHEMA = '#/components/schemas/AvailableMethod';
    public const FIELDS = ['method', 'providers'];
}
