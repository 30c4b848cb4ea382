/**
 * "Did you mean" for configuration keys, flags and environment variables.
 * A misspelt key used to be dropped in silence and its setting ran on its
 * default (`auth.apiKeyFile` for `auth.apiKeysFile` turned authentication
 * off), so every unknown name is refused or warned about with the nearest
 * valid one.
 */

/**
 * Optimal string alignment distance (Levenshtein plus adjacent
 * transpositions, so `queueLenght` is one edit from `queueLength`),
 * case-insensitive: `intervalMS` is zero edits from `intervalMs`.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // Three rows: the one before last (transpositions), the last, the current.
  let before: number[] = [];
  let last = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min((last[j] as number) + 1, (row[j - 1] as number) + 1, (last[j - 1] as number) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, (before[j - 2] as number) + 1);
      row.push(best);
    }
    before = last;
    last = row;
  }
  return last[t.length] as number;
}

/**
 * The candidate nearest to `name`, or undefined when none is near enough to
 * be a likely typo: at most a third of the name's length in edits (at least
 * 2), or a candidate that contains the name or is contained in it (a missing
 * or extra section word). Ties go to the earlier candidate.
 */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  if (bestDistance <= limit) return best;
  const lower = name.toLowerCase();
  return candidates.find((candidate) => candidate.length >= 4 && lower.length >= 4 && (candidate.toLowerCase().includes(lower) || lower.includes(candidate.toLowerCase())));
}

/**
 * The refusal of an unknown command-line word: `<what> "<name>"`, the
 * nearest of `candidates` when one is near ({@link closest}), and where to
 * look (`(see <help>)`).
 */
export function unknownNameMessage(what: string, name: string, candidates: readonly string[], help: string): string {
  const suggestion = closest(name, candidates);
  return `${what} ${JSON.stringify(name)}${suggestion === undefined ? '' : `; did you mean ${suggestion}?`} (see ${help})`;
}
