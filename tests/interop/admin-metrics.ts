/**
 * Reads counters from a router's admin `/metrics`, so interoperability tests
 * can check what the router itself answered (ab, for one, only reports how
 * many answers were not 2xx).
 */

/** `switchyard_requests_total` per HTTP status, over every route and model. */
export function answersByStatus(admin: string): Promise<Map<string, number>> {
  return byLabel(admin, 'switchyard_requests_total', 'status');
}

/** `switchyard_shed_total` per reason, over every priority. */
export function shedByReason(admin: string): Promise<Map<string, number>> {
  return byLabel(admin, 'switchyard_shed_total', 'reason');
}

/** The samples of counter `name` summed per value of `label`. */
async function byLabel(admin: string, name: string, label: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const sums = new Map<string, number>();
  const sample = new RegExp(`^${name}\\{.*\\b${label}="([^"]*)".*\\} (\\S+)$`);
  for (const line of text.split('\n')) {
    const match = sample.exec(line);
    if (match === null) continue;
    const value = match[1] as string;
    sums.set(value, (sums.get(value) ?? 0) + Number(match[2]));
  }
  return sums;
}

/** `after - before` per key, keys with no change left out. */
export function difference(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, value] of after) if (value !== (before.get(key) ?? 0)) out.set(key, value - (before.get(key) ?? 0));
  return out;
}
