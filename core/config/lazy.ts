/**
 * Gives `target[key]` the value `make` returns, made the first time the property is read and
 * never again (an enumerable getter, as a plain property is enumerable): what reading the
 * configuration does not need up front (a key's zod schema, a default's parsed value) is made
 * only for a command that reads it. An error `make` throws is thrown to each reader.
 */
export function lazyProperty<T extends object, K extends keyof T>(target: T, key: K, make: () => T[K]): T {
  let made: { value: T[K] } | undefined;
  return Object.defineProperty(target, key, {
    get: () => {
      made ??= { value: make() };
      return made.value;
    },
    enumerable: true,
    configurable: true,
  });
}
