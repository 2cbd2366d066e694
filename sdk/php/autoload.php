<?php
// Without Composer: require this file to load the library (PSR-4, Cauri\ => src/).
// With Composer, vendor/autoload.php does the same from composer.json.
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Cauri\\', 6) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 6)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
