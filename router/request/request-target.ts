/** The path part of a request target, for the stages and listeners that route or guard by path. */

/** The path of a request target without its query; absolute-form targets keep only their path. */
export function pathOf(target: string): string {
  if (target.charCodeAt(0) !== 0x2f) {
    try {
      return new URL(target).pathname;
    } catch {
      return '';
    }
  }
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}
