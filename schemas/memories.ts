import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from './atoms.ts'

export const MemoryId = Type.String({ pattern: '^mem_[0-9A-Za-z]{1,40}$' })

export const MemoryFields = {
  content: Type.String({ minLength: 1, maxLength: 8000, description: 'What to remember.' }),
  tags: Type.Array(Type.String({ pattern: '^[^\\s,]{1,50}$' }), { maxItems: 20, uniqueItems: true }),
  source: Type.String({ maxLength: 200, description: 'Who or what it came from.' }),
}

export const Memory = Type.Object({
  id: Type.String(),
  project: Type.String({ description: 'The project id.' }),
  content: Type.String(),
  tags: Type.Array(Type.String()),
  source: Type.String(),
  created_by: Type.Union([Type.String(), Type.Null()], { description: 'Email of the user who added it.' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Memory = Static<typeof Memory>
