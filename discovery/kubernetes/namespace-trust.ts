/**
 * The start-up checks of which namespaces discovery may watch. A namespace
 * other than the router's own is usually another team's, and a pod there
 * that matches a source's selector is routed prompts: without a model
 * allow-list it can claim any model, a production one included. So watching
 * outside the router's own namespace is an explicit opt-in
 * (`discovery.crossNamespace`), refused at start-up otherwise, and once
 * allowed, a source there without an allow-list still draws a warning.
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

/** A source watching a namespace outside the router's own. */
export interface ForeignSource {
  readonly name: string;
  readonly namespace: string;
}

/**
 * Sources that watch a namespace other than `home`, the router's own: the
 * namespace of its `mode` source when there is one (the operator named it
 * for the router's main fleet), else the router's default namespace
 * (service account or kubeconfig context). Empty when `home` is unknown:
 * every source then names its namespace, and none is the router's.
 */
export function foreignSources(sources: readonly { readonly name: string; readonly namespace: string }[], home: string | undefined): ForeignSource[] {
  if (home === undefined) return [];
  return sources.filter((source) => source.namespace !== home).map(({ name, namespace }) => ({ name, namespace }));
}
