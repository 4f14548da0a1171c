// What a tool publishes as its output schema: the full schema less what only repeats. A marked
// repeat (`x-repeats`, a comparison's previous period) is its type alone; a nullable enum is one
// schema with null in its enum. Both admit every value the full schema admits.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { publishedOutputSchema } from '../core/tool-schemas.ts'

t.test('a marked repeat is published as its type; a nullable enum as one schema', async (t) => {
  const Day = Type.Object({ date: Type.String({ description: 'a day' }), n: Type.Integer() })
  const full = Type.Object({
    window: Type.Union([Type.Union([Type.Literal('7d'), Type.Literal('30d')]), Type.Null()]),
    mode: Type.Union([Type.String({ enum: ['a', 'b'] }), Type.Null()]),
    days: Type.Array(Day),
    previous: Type.Union([Type.Object({ days: Type.Array(Day) }, { 'x-repeats': 'the answer' }), Type.Null()]),
  })
  const published = publishedOutputSchema(full) as unknown as { properties: Record<string, unknown> }
  t.same(published.properties.previous, { type: ['object', 'null'] }, 'the repeat: its type, nullable')
  t.same(published.properties.mode, { type: ['string', 'null'], enum: ['a', 'b', null] }, 'null joins the enum')
  t.same(published.properties.days, { type: 'array', items: { type: 'object', properties: { date: { type: 'string' }, n: { type: 'integer' } } } }, 'the original stays whole')
  t.notMatch(JSON.stringify(published), /x-repeats|description|required/)
  // The app's validators are not strict (the mark is an annotation); a client's may be.
  const validFull = new Ajv2020({ strict: false }).compile(JSON.parse(JSON.stringify(full)))
  const validPublished = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(published)
  for (const value of [
    { window: '7d', mode: null, days: [{ date: '2026-11-20', n: 1 }], previous: null },
    { window: null, mode: 'a', days: [], previous: { days: [{ date: '2026-11-19', n: 0 }] } },
  ]) {
    t.ok(validFull(value), 'the full schema admits it')
    t.ok(validPublished(value), 'so does the published one')
  }
  t.notOk(validPublished({ window: null, mode: 'c', days: [], previous: null }), 'an enum still refuses what it does not list')
})
