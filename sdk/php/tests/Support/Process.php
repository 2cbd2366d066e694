<?php

declare(strict_types=1);

namespace Cauri\Tests\Support;

/**
 * A child process the tests start (no shell: its PID is the program's) and
 * stop by that PID alone: SIGTERM, then SIGKILL after 5 s.
 */
final class Process
{
    /** @var resource|null */
    private $proc;
    public readonly int $pid;
    /** @var list<Process> */
    private static array $running = [];
    /** @var list<string> folders made by tempDir(), removed at the end */
    private static array $dirs = [];
    private static bool $hooked = false;

    /**
     * @param list<string> $cmd
     * @param array<string, string> $env added to this process's environment
     */
    public function __construct(array $cmd, array $env, public readonly string $log, ?string $cwd = null)
    {
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes, $cwd, array_merge(getenv(), $env));
        if (!is_resource($proc)) {
            throw new \RuntimeException('cannot start ' . $cmd[0]);
        }
        $this->proc = $proc;
        $this->pid = proc_get_status($proc)['pid'];
        self::$running[] = $this;
        self::hook();
    }

    public function running(): bool
    {
        return $this->proc !== null && proc_get_status($this->proc)['running'];
    }

    public function stop(): void
    {
        if ($this->proc === null) {
            return;
        }
        if (proc_get_status($this->proc)['running']) {
            proc_terminate($this->proc, 15);
            $deadline = microtime(true) + 5;
            while (proc_get_status($this->proc)['running'] && microtime(true) < $deadline) {
                usleep(20_000);
            }
            if (proc_get_status($this->proc)['running']) {
                proc_terminate($this->proc, 9);
            }
        }
        proc_close($this->proc);
        $this->proc = null;
        self::$running = array_values(array_filter(self::$running, fn ($p) => $p !== $this));
    }

    public static function freePort(): int
    {
        $s = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($s === false) {
            throw new \RuntimeException("no free port: $errstr");
        }
        $name = stream_socket_get_name($s, false);
        fclose($s);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    /** Waits until 127.0.0.1:$port accepts connections (at most $seconds). */
    public function waitPort(int $port, float $seconds = 10): void
    {
        $deadline = microtime(true) + $seconds;
        while (microtime(true) < $deadline) {
            $c = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 0.2);
            if ($c !== false) {
                fclose($c);
                return;
            }
            if (!$this->running()) {
                break;
            }
            usleep(30_000);
        }
        throw new \RuntimeException("nothing listens on 127.0.0.1:$port; log:\n" . @file_get_contents($this->log));
    }

    public static function tempDir(string $prefix): string
    {
        $dir = sys_get_temp_dir() . '/' . $prefix . bin2hex(random_bytes(5));
        mkdir($dir, 0700, true);
        self::$dirs[] = $dir;
        self::hook();
        return $dir;
    }

    /** At the end of the run: every process still running stopped, every temporary folder removed (kept with CAURI_PHP_KEEP set). */
    private static function hook(): void
    {
        if (self::$hooked) {
            return;
        }
        self::$hooked = true;
        register_shutdown_function(static function (): void {
            foreach (self::$running as $p) {
                $p->stop();
            }
            if (getenv('CAURI_PHP_KEEP') === false) {
                foreach (self::$dirs as $d) {
                    self::remove($d);
                }
            }
        });
    }

    private static function remove(string $path): void
    {
        if (is_dir($path) && !is_link($path)) {
            foreach (scandir($path) as $e) {
                if ($e !== '.' && $e !== '..') {
                    self::remove("$path/$e");
                }
            }
            @rmdir($path);
        } else {
            @unlink($path);
        }
    }

    /** Starts `php -S 127.0.0.1:<free port>` serving $docroot (with $router when given). */
    public static function phpServer(string $docroot, ?string $router, array $env, string $logDir): array
    {
        $port = self::freePort();
        $cmd = [PHP_BINARY, '-S', "127.0.0.1:$port", '-t', $docroot];
        if ($router !== null) {
            $cmd[] = $router;
        }
        $p = new self($cmd, $env, $logDir . "/php-$port.log");
        $p->waitPort($port);
        return [$p, "http://127.0.0.1:$port"];
    }
}
