// Small reusable TypeBox pieces; resources are composed from these.
import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** A string enum as plain JSON Schema `enum` (clear errors, tidy tool schemas). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) })

export const NullableTimestamp = (description?: string) =>
  Type.Union([Timestamp(), Type.Null()], description ? { description } : {})

export const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Calendar date, YYYY-MM-DD, in the project time zone.' })

export const ProjectRef = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'Id or slug (list_projects).',
})

export const roles = ['viewer', 'reviewer', 'owner'] as const
export const Role = StringEnum(roles)
export type Role = Static<typeof Role>

export const Page = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })
export const PageSize = Type.Integer({ minimum: 1, maximum: 100, default: 20 })

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    page: Type.Integer(),
    page_size: Type.Integer(),
    total: Type.Integer(),
    total_pages: Type.Integer(),
  })

export const ErrorDetail = Type.Object({ path: Type.String(), message: Type.String() })
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'snake_case error code' }),
      message: Type.String(),
      details: Type.Optional(Type.Array(ErrorDetail)),
    }),
  },
  { description: 'The error shape of every surface.' }
)
