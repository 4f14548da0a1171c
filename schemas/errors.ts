// The API's error object (core/errors.ts's errorBody), as a response schema.
import { Type } from '@sinclair/typebox'

export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'e.g. invalid_arguments, unauthorized, forbidden, not_found, rate_limited.' }),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), { description: 'Which arguments are wrong, and how.' })),
  }),
})

/** An answer with the API's error object, described (the status is its key in `response`). */
export const apiErrorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } })
