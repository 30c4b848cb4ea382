/**
 * Per-endpoint data that belongs to a plugin, not to the core state: for
 * scheduling plugins (filters, scorers, pickers in router/scheduling) that
 * need to remember something about each endpoint between requests, in the
 * spirit of the attribute map on the Gateway API Inference Extension's
 * endpoint. A plugin declares one {@link AttributeKey} per datum; the key
 * object, not its name, identifies the entry and carries its type, so two
 * plugins cannot collide on a name and no reader has to cast. Nothing in the
 * router uses it yet; see endpoint-attributes.test.ts.
 *
 * Not for the request hot path of the core policies: a read is a Map lookup.
 */

/**
 * Names one kind of per-endpoint value of type `T`. Create one per datum, at
 * module level, and share the object: two keys with the same name are
 * different keys. The name is for debugging only.
 */
export class AttributeKey<T> {
  /** Type-only member that ties the key to `T` both ways: a key for one type is not one for a wider or narrower type. */
  declare readonly valueType?: (value: T) => T;
  /** For debugging only. */
  readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  toString(): string {
    return `AttributeKey(${this.name})`;
  }
}

/** One endpoint's plugin attributes; lives and dies with the endpoint's state. */
export class EndpointAttributes {
  /** Created on the first write: endpoints no plugin writes to carry no map. */
  #values: Map<object, unknown> | undefined;

  /** The value stored under `key`, or undefined when none is. */
  get<T>(key: AttributeKey<T>): T | undefined {
    // Only set() writes, and it stores under `key` a value of the key's own type.
    return this.#values?.get(key) as T | undefined;
  }

  /** True when a value is stored under `key`. */
  has<T>(key: AttributeKey<T>): boolean {
    return this.#values?.has(key) ?? false;
  }

  /** Stores `value` under `key`, replacing what was there. */
  set<T>(key: AttributeKey<T>, value: T): void {
    (this.#values ??= new Map()).set(key, value);
  }

  /** Removes the value under `key`; returns true when there was one. */
  delete<T>(key: AttributeKey<T>): boolean {
    return this.#values?.delete(key) ?? false;
  }
}
