<?php
// The suite needs no Composer: the library's own autoloader, and one for the tests' helpers.
declare(strict_types=1);

require dirname(__DIR__) . '/autoload.php';

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Cauri\\Tests\\', 12) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 12)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
