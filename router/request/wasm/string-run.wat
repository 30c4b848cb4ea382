;; The inner loop of the bounded body scanner (router/request/json-body-scanner.ts): where a run of
;; plain string bytes ends. A prompt is almost all string content, and a JavaScript byte loop over it
;; cost ~1-3 ns a byte; sixteen bytes a step here cost a fraction of that. Built into
;; string-run-module.ts by `npm run wasm:build` (wabt); a test checks the two agree.
(module
  ;; The chunk being scanned is copied here; the caller grows it to fit.
  (memory (export "memory") 1)

  ;; The offset of the first byte in [from, to) that is a quote (0x22), a backslash (0x5c) or a
  ;; control byte (below 0x20), or `to` when there is none.
  (func (export "runEnd") (param $from i32) (param $to i32) (result i32)
    (local $v v128)
    (local $hits i32)
    (local $byte i32)
    (block $tail
      (loop $sixteen
        (br_if $tail (i32.gt_u (i32.add (local.get $from) (i32.const 16)) (local.get $to)))
        (local.set $v (v128.load (local.get $from)))
        (local.set $hits
          (i8x16.bitmask
            (v128.or
              (v128.or
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
              (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20))))))
        (if (local.get $hits)
          (then (return (i32.add (local.get $from) (i32.ctz (local.get $hits))))))
        (local.set $from (i32.add (local.get $from) (i32.const 16)))
        (br $sixteen)))
    (block $done
      (loop $single
        (br_if $done (i32.ge_u (local.get $from) (local.get $to)))
        (local.set $byte (i32.load8_u (local.get $from)))
        (br_if $done
          (i32.or
            (i32.or (i32.eq (local.get $byte) (i32.const 0x22)) (i32.eq (local.get $byte) (i32.const 0x5c)))
            (i32.lt_u (local.get $byte) (i32.const 0x20))))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $single)))
    (local.get $from))
)
