<?php

declare(strict_types=1);

namespace Cauri\Tests\Support;

/**
 * A real `cauri serve` on 127.0.0.1 with its own SQLite file, and a
 * workspace created with `cauri workspace create` on the same database.
 * The binary is $CAURI_BIN, else built from the repository (two levels up).
 */
final class Service
{
    private static ?Service $shared = null;
    private static ?string $bin = null;

    public readonly string $baseUrl;
    /** @var array<string, string> live_public, live_secret, test_public, test_secret */
    public readonly array $keys;
    public readonly string $workspaceId;

    private function __construct(private readonly Process $process, public readonly string $dir, string $baseUrl, private readonly string $db)
    {
        $this->baseUrl = $baseUrl;
        $ws = $this->workspace();
        $this->keys = $ws['keys'];
        $this->workspaceId = $ws['id'];
    }

    /**
     * A new workspace (`cauri workspace create`, verified on demand).
     *
     * @return array{id: string, keys: array<string, string>}
     */
    public function workspace(bool $verified = false): array
    {
        $args = ['workspace', 'create', '--name', 'Boutique PHP ' . bin2hex(random_bytes(3))];
        if ($verified) {
            $args[] = '--verified';
        }
        $decoded = json_decode($this->cli($args), true);
        if (!is_array($decoded) || !isset($decoded['keys']['test_secret'], $decoded['id'])) {
            throw new \RuntimeException('cauri workspace create gave no keys');
        }
        return $decoded;
    }

    /** The instance most tests share, started once. */
    public static function shared(): self
    {
        return self::$shared ??= self::start();
    }

    public static function start(): self
    {
        $dir = Process::tempDir('cauri-php-');
        $port = Process::freePort();
        $base = "http://127.0.0.1:$port";
        $db = "$dir/cauri.db";
        $p = new Process([self::binary(), 'serve'], [
            'CAURI_ADDR' => "127.0.0.1:$port",
            'CAURI_BASE_URL' => $base,
            'CAURI_DATABASE_URL' => $db,
            'CAURI_WEBHOOK_ALLOWED_CIDRS' => '127.0.0.0/8',
            'CAURI_WEBHOOK_TIMEOUT' => '5s',
            'CAURI_LOG_LEVEL' => 'warn',
        ], "$dir/serve.log");
        $deadline = microtime(true) + 30;
        while (true) {
            $ctx = stream_context_create(['http' => ['timeout' => 1, 'ignore_errors' => true]]);
            $body = @file_get_contents("$base/healthz", false, $ctx);
            if ($body !== false && isset($http_response_header[0]) && str_contains($http_response_header[0], ' 200')) {
                break;
            }
            if (!$p->running() || microtime(true) > $deadline) {
                $p->stop();
                throw new \RuntimeException("cauri serve did not become healthy; log:\n" . @file_get_contents("$dir/serve.log"));
            }
            usleep(50_000);
        }
        return new self($p, $dir, $base, $db);
    }

    public function stop(): void
    {
        $this->process->stop();
    }

    /** Runs a `cauri` command on this instance's database; its stdout. */
    public function cli(array $args, string $stdin = ''): string
    {
        $proc = proc_open(array_merge([self::binary()], $args), [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $this->dir . '/cli.log', 'a']], $pipes, null, array_merge(getenv(), ['CAURI_DATABASE_URL' => $this->db]));
        fwrite($pipes[0], $stdin);
        fclose($pipes[0]);
        $out = stream_get_contents($pipes[1]);
        fclose($pipes[1]);
        if (proc_close($proc) !== 0) {
            throw new \RuntimeException('cauri ' . $args[0] . ' failed: ' . @file_get_contents($this->dir . '/cli.log'));
        }
        return $out;
    }

    /** A dashboard user of the workspace, signed in: the value of its cauri_session cookie. */
    public function dashboardSession(): string
    {
        $email = 'dev-' . bin2hex(random_bytes(3)) . '@shop.example';
        $password = 'Kp9#vLw2-' . bin2hex(random_bytes(6));
        $this->cli(['user', 'create', '--email', $email, '--workspace', $this->workspaceId], $password . "\n");
        $page = self::http('GET', $this->baseUrl . '/dashboard/login', [], null);
        $csrf = $page['cookies']['cauri_csrf'] ?? throw new \RuntimeException('no cauri_csrf cookie');
        $login = self::http('POST', $this->baseUrl . '/dashboard/login', ['Cookie: cauri_csrf=' . $csrf, 'Content-Type: application/x-www-form-urlencoded'],
            http_build_query(['email' => $email, 'password' => $password, 'csrf' => $csrf]));
        return $login['cookies']['cauri_session'] ?? throw new \RuntimeException('sign-in failed: HTTP ' . $login['status']);
    }

    /** @return array{status: int, cookies: array<string, string>, body: string} */
    private static function http(string $method, string $url, array $headers, ?string $body): array
    {
        $opts = ['method' => $method, 'header' => implode("\r\n", $headers), 'ignore_errors' => true, 'follow_location' => 0, 'timeout' => 10];
        if ($body !== null) {
            $opts['content'] = $body;
        }
        $out = (string) file_get_contents($url, false, stream_context_create(['http' => $opts]));
        $cookies = [];
        foreach ($http_response_header as $line) {
            if (preg_match('/^Set-Cookie:\s*([^=]+)=([^;]*)/i', $line, $m)) {
                $cookies[$m[1]] = $m[2];
            }
        }
        return ['status' => (int) explode(' ', $http_response_header[0])[1], 'cookies' => $cookies, 'body' => $out];
    }

    public static function binary(): string
    {
        if (self::$bin !== null) {
            return self::$bin;
        }
        $env = getenv('CAURI_BIN');
        if ($env !== false && $env !== '') {
            return self::$bin = $env;
        }
        $root = dirname(__DIR__, 4);
        $out = Process::tempDir('cauri-php-bin-') . '/cauri';
        $proc = proc_open(['go', 'build', '-o', $out, './cmd/cauri'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        $log = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        if (proc_close($proc) !== 0) {
            throw new \RuntimeException("go build failed:\n$log");
        }
        return self::$bin = $out;
    }
}
