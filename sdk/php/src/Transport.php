<?php

declare(strict_types=1);

namespace Cauri;

/**
 * One HTTP exchange over PHP's stream wrappers (no ext-curl needed). Any
 * non-2xx is an answer, not a failure; only the absence of an answer throws.
 */
class Transport
{
    /**
     * @param array<string, string> $headers
     * @param resource|null $sink when given, a 2xx body is copied there and Response::$body is ''
     * @throws NetworkException
     */
    public function send(string $method, string $url, array $headers, ?string $body, float $timeout, $sink = null): Response
    {
        $lines = [];
        foreach ($headers as $k => $v) {
            $lines[] = $k . ': ' . $v;
        }
        $http = [
            'method' => $method,
            'header' => implode("\r\n", $lines),
            'ignore_errors' => true,
            'follow_location' => 0,
            'max_redirects' => 0,
            'timeout' => $timeout,
            'protocol_version' => 1.1,
        ];
        if ($body !== null) {
            $http['content'] = $body;
        }
        $ctx = stream_context_create(['http' => $http]);
        $error = null;
        set_error_handler(static function (int $no, string $str) use (&$error): bool {
            $error = $str;
            return true;
        });
        try {
            $fp = fopen($url, 'rb', false, $ctx);
        } finally {
            restore_error_handler();
        }
        if ($fp === false) {
            throw new NetworkException("$method $url: " . ($error ?? 'no answer'));
        }
        try {
            $meta = stream_get_meta_data($fp);
            [$status, $respHeaders] = self::parseHeaders($meta['wrapper_data'] ?? []);
            if ($status === 0) {
                throw new NetworkException("$method $url: no HTTP status line");
            }
            $out = '';
            if ($sink !== null && $status >= 200 && $status < 300) {
                if (stream_copy_to_stream($fp, $sink) === false) {
                    throw new NetworkException("$method $url: the body could not be read");
                }
            } else {
                $out = stream_get_contents($fp);
                if ($out === false) {
                    throw new NetworkException("$method $url: the body could not be read");
                }
            }
            if (stream_get_meta_data($fp)['timed_out'] ?? false) {
                throw new NetworkException("$method $url: timed out after {$timeout}s reading the body");
            }
            return new Response($status, $respHeaders, $out);
        } finally {
            fclose($fp);
        }
    }

    /**
     * @param list<string> $lines
     * @return array{int, array<string, list<string>>}
     */
    private static function parseHeaders(array $lines): array
    {
        $status = 0;
        $headers = [];
        foreach ($lines as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m)) {
                $status = (int) $m[1]; // the last status line wins (after a 100 Continue)
                $headers = [];
                continue;
            }
            $kv = explode(':', $line, 2);
            if (count($kv) === 2) {
                $headers[strtolower(trim($kv[0]))][] = trim($kv[1]);
            }
        }
        return [$status, $headers];
    }
}
