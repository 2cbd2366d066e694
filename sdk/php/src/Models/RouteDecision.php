<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The best provider, its fallbacks and the confidence.
 *
 * @property-read string $provider
 * @property-read string $reason
 * @property-read list<string> $alternates
 * @property-read float $confidence
 */
final class RouteDecision extends Model
{
    public const SCHEMA = '#/components/schemas/RouteResponse/properties/routing';
    public const FIELDS = ['provider', 'reason', 'alternates', 'confidence'];
}
