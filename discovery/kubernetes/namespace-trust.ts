/**
 * The start-up check behind one warning: when the Kubernetes sources watch
 * more than one namespace, each namespace is usually another team's, and a
 * source without a model allow-list lets any matching pod there claim any
 * model, a production one included, and receive its prompts.
 */

/** One Kubernetes source as the check sees it. */
export interface WatchedSource {
  readonly name: string;
  readonly namespace: string;
  /** The source has a model allow-list. */
  readonly restricted: boolean;
}

/** What the warning names. */
export interface NamespaceTrustGap {
  /** Every distinct namespace watched, sorted. */
  readonly namespaces: readonly string[];
  /** Sources with no allow-list, in the order given. */
  readonly unrestricted: readonly string[];
}

/**
 * The gap to warn about, or undefined when at most one namespace is watched
 * or every source has an allow-list.
 */
export function namespaceTrustGap(sources: readonly WatchedSource[]): NamespaceTrustGap | undefined {
  const namespaces = [...new Set(sources.map((source) => source.namespace))].sort();
  const unrestricted = sources.filter((source) => !source.restricted).map((source) => source.name);
  return namespaces.length > 1 && unrestricted.length > 0 ? { namespaces, unrestricted } : undefined;
}
