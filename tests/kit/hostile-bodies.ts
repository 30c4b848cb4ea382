/**
 * Request bodies built to cost a router CPU and memory, for the body-scan
 * micro-benchmark and the hardening tests: each is `bytes` long (about).
 */

/** `{"model":…,"x":[[[…]]]}`: as deep as the size allows. */
export function deeplyNestedBody(bytes: number, model = 'm'): Buffer {
  const head = `{"model":"${model}","x":`;
  const half = Math.floor((bytes - head.length - 1) / 2);
  return Buffer.from(head + '['.repeat(half) + ']'.repeat(half) + '}');
}

/** `{"model":…,"x":[[[1,2]],[[1,2]],…]}`: depth 3, millions of values. */
export function manySmallArraysBody(bytes: number, model = 'm'): Buffer {
  const head = `{"model":"${model}","x":[`;
  const n = Math.floor((bytes - head.length - 2) / 8);
  return Buffer.from(head + Array.from({ length: n }, () => '[[1,2]]').join(',') + ']}');
}

/** A multipart body that is nothing but the delimiter of boundary `a`, repeated. */
export function tinyBoundaryMultipartBody(bytes: number): Buffer {
  return Buffer.from('\r\n--a'.repeat(Math.floor(bytes / 5)));
}
