// Response schemas every operation route declares: the operation's output and the error shape.
import type { TSchema } from '@sinclair/typebox'
import { ErrorResponse } from '../schemas/atoms.ts'

export function responses<T extends TSchema>(ok: T, okStatus: 200 | 201 = 200) {
  return { [okStatus]: ok, '4xx': ErrorResponse, '5xx': ErrorResponse } as { 200: T; '4xx': typeof ErrorResponse; '5xx': typeof ErrorResponse }
}
