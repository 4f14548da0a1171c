;; A JSON text written as the body of a JSON string (what JSON.stringify does to it between the
;; quotes): a backslash before each `"` and `\`, every other byte as it is. core/json-escape.ts
;; loads it; `npm run build:wasm` compiles this file into core/json-escape-wasm.ts, and
;; test/json-escape.test.ts holds the two the same.
;;
;; Eight bytes a step, without a branch: the step's bytes that take a backslash make an 8-bit
;; mask; the mask picks a swizzle pattern that spreads the eight bytes over up to sixteen, leaving
;; a zero before each byte that takes one, and a 16-byte pattern of those backslashes that is
;; OR-ed in. 16 bytes are stored; the output moves on by 8 + the mask's bit count. JS fills the
;; two tables (core/json-escape.ts, escapeTables) at offsets 0 and 4096 of the memory.
(module
  (memory (export "memory") 1)
  ;; escape(in, n, out): the n bytes at `in`, escaped, written at `out` (which has 2n + 16 bytes
  ;; of room); returns how many bytes it wrote, or -1 when a byte needs more than a backslash: a
  ;; control character (below 0x20), or 0xEF (see core/json-escape.ts).
  (func (export "escape") (param $in i32) (param $n i32) (param $out i32) (result i32)
    (local $i i32) (local $end i32) (local $o i32) (local $v v128) (local $mask i32) (local $bad i32) (local $c i32)
    (local.set $i (local.get $in))
    (local.set $end (i32.add (local.get $in) (local.get $n)))
    (local.set $o (local.get $out))
    (block $steps_done
      (loop $step
        (br_if $steps_done (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $end)))
        ;; the eight bytes in lanes 0-7, zeros in lanes 8-15
        (local.set $v (v128.load64_zero align=1 (local.get $i)))
        ;; lanes below 0x20 or equal to 0xEF (lanes 8-15, zeros, always count: masked off below)
        (local.set $bad (i32.or (local.get $bad)
          (i8x16.bitmask (v128.or
            (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20)))
            (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0xef)))))))
        ;; the mask of `"` and `\`, times 16: its patterns' offset in the tables
        (local.set $mask (i32.shl
          (i8x16.bitmask (v128.or
            (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
            (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c)))))
          (i32.const 4)))
        (v128.store align=1 (local.get $o)
          (v128.or
            (i8x16.swizzle (local.get $v) (v128.load (local.get $mask)))
            (v128.load offset=4096 (local.get $mask))))
        (local.set $o (i32.add (local.get $o) (i32.add (i32.const 8) (i32.popcnt (local.get $mask)))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $step)))
    (if (i32.and (local.get $bad) (i32.const 0xff)) (then (return (i32.const -1))))
    ;; the last 0-7 bytes, one at a time
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.or (i32.lt_u (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0xef)))
          (then (return (i32.const -1))))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
          (then
            (i32.store8 (local.get $o) (i32.const 0x5c))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))))
        (i32.store8 (local.get $o) (local.get $c))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte)))
    (i32.sub (local.get $o) (local.get $out))))
