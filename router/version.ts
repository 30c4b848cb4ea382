/**
 * The router's version, as package.json gives it (the image copies package.json beside the
 * code), for `--version`, the start-up line and `switchyard_build_info`.
 */
import { readFileSync } from 'node:fs';

/** `version` from package.json, read once at start. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
