// Lint: neostandard (the Fastify team's style, with its TypeScript rules), run by `npm test`.
import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['node_modules/**', '.data/**', 'coverage/**', '.tap/**'] }),
  {
    rules: {
      // House style: `function name()` without the space standard asks for.
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
      // Short objects stay on one line; long ones put each property on its own.
      '@stylistic/object-property-newline': ['error', { allowAllPropertiesOnSameLine: true }],
      // Wire fields are snake_case by contract (page_size, input_schema, review_note …).
      camelcase: 'off',
      // `const Role = Type.Union(…)` beside `type Role = Static<typeof Role>` is TypeBox's idiom;
      // TypeScript itself refuses a real redeclaration.
      '@typescript-eslint/no-redeclare': 'off',
      // `void promise` marks a promise deliberately not awaited.
      'no-void': ['error', { allowAsStatement: true }],
    },
  },
  {
    // The server's own code takes node:http(s) with process.getBuiltinModule: an ES import builds
    // the module's namespace from every export, which loads Node's fetch (undici) at start.
    files: ['**/*.ts'],
    ignores: ['test/**', 'bench/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['http', 'https', 'node:http', 'node:https'].map((name) => ({
          name,
          message: "Use process.getBuiltinModule('node:http'): an ES import of it loads Node's fetch (undici) at start.",
        })),
      }],
    },
  },
]
