<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A test session settled by the sandbox.
 *
 * @property-read bool $success
 * @property-read bool $sandbox
 * @property-read string $status
 * @property-read string $message
 */
final class SandboxResponse extends Model
{
    public const SCHEMA = '#/components/schemas/SandboxResponse';
    public const FIELDS = ['success', 'sandbox', 'status', 'message'];
}
