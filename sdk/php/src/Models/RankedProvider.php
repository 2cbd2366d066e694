<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A provider and its estimated success rate.
 *
 * @property-read string $provider
 * @property-read float $score
 */
final class RankedProvider extends Model
{
    public const SCHEMA = '#/components/schemas/RankedProvider';
    public const FIELDS = ['provider', 'score'];
}
