import type { IncomingMessage } from 'node:http';
import { SwitchyardError } from '../errors/errors.ts';

/** The client went away before its body arrived; there is no one to answer. */
export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

const EMPTY = Buffer.alloc(0);

/**
 * Reads the whole request body into memory (it is needed to route and to
 * replay on retry), refusing more than `limit` bytes.
 * @throws SwitchyardError 413 over the limit (before reading, when
 * Content-Length already says so); ClientGoneError when the client aborts.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size));
    };
    const onError = () => {
      cleanup();
      reject(new ClientGoneError('client connection failed while sending the body'));
    };
    const onClose = () => {
      if (req.complete) return;
      cleanup();
      reject(new ClientGoneError('client closed the connection while sending the body'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLarge(limit: number): SwitchyardError {
  return new SwitchyardError('SWITCHYARD_BODY_TOO_LARGE', `The request body exceeds the limit of ${limit} bytes.`);
}
