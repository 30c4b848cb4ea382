/** Field shapes several sections share: addresses, durations, mounted files. */
import { z } from 'zod';
import { HOST_PORT_PATTERN, HOST_PORT_SHAPE_MESSAGE, PORT_RANGE_MESSAGE, portOutOfRange } from '../host-port.ts';

/** HOST:PORT with a port in range. */
export const hostPort = z
  .string()
  .regex(HOST_PORT_PATTERN, HOST_PORT_SHAPE_MESSAGE)
  .refine((value) => !portOutOfRange(value), PORT_RANGE_MESSAGE);

/** A positive whole number of milliseconds. */
export const positiveMs = z.number().int().positive();

/** A readable file path (secrets and certificates are mounted files, never values in the config). */
export const filePath = z.string().min(1);
