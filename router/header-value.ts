/**
 * Header values as Node hands them over: `IncomingHttpHeaders` types a
 * header as one string or as a list of lines (Node joins most repeats with
 * `, ` but keeps some, such as `set-cookie`, line by line). The headers the
 * router reads as one value (priority, session key, an answer's content
 * type) take the first line where a list is possible, the same rule everywhere.
 */

/** The first value of a header that may come as a list of lines; undefined when absent or empty. */
export function firstHeaderValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' || value === undefined ? value : value[0];
}
