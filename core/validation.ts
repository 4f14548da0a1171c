// The two Ajv instances every surface validates with: strict for JSON bodies and tool
// arguments, coercing for query strings and path parameters (which arrive as text).
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'

const base: Options = {
  allErrors: true,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
  // maxLength counts code points (Ajv's default), so 2000 emoji are 2000 characters.
}

function build(options: Options): Ajv {
  const ajv = new Ajv({ ...base, ...options })
  ;(addFormats as unknown as (a: Ajv) => void)(ajv)
  return ajv
}

export const strictAjv = build({ coerceTypes: false })
export const coercingAjv = build({ coerceTypes: 'array' })
