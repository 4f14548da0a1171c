// What a command of the `growthdesk` CLI is: its words, options and handler. Help, usage
// lines and argument checking are generated from this, so a command cannot drift from its help.
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.ts'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: NodeJS.ProcessEnv
}

export interface WithAppOptions {
  /** The server key of the secrets at rest is lost: give up what it sealed instead of refusing to start. */
  forgetUnreadableSecrets?: boolean
}

export interface OptionSpec {
  type: 'string' | 'boolean'
  /** Placeholder for the value in usage lines, e.g. EMAIL. */
  value?: string
  description: string
  required?: boolean
  choices?: readonly string[]
  /** May be given more than once (a string option): its value is the list, in order. */
  multiple?: boolean
}
export type OptionSpecs = Readonly<Record<string, OptionSpec>>

// The last branch is the erased OptionSpec, whose type is still the union of both.
type OptionValue<S extends OptionSpec> = S extends { type: 'boolean' }
  ? boolean
  : S extends { type: 'string'; multiple: true }
    ? (S extends { choices: readonly (infer C extends string)[] } ? C : string)[]
    : S extends { type: 'string' }
      ? (S extends { choices: readonly (infer C extends string)[] } ? C : string) | (S extends { required: true } ? never : undefined)
      : string | string[] | boolean | undefined

export type OptionValues<O extends OptionSpecs> = { -readonly [K in keyof O]: OptionValue<O[K]> }

export interface Invocation<O extends OptionSpecs = OptionSpecs, P extends string = string> {
  /** Checked against the spec: required options present, choices respected. */
  options: OptionValues<O>
  /** Positional arguments by the names the command declares (all required). */
  args: Record<P, string>
  io: CliIo
  /** Builds the app on the configured database (applying migrations), runs fn, always closes it. */
  withApp<T>(fn: (app: FastifyInstance, config: Config) => Promise<T>, options?: WithAppOptions): Promise<T>
  /** With --json: `result` as one line of JSON; otherwise the readable lines. */
  print(result: unknown, lines: readonly string[]): void
  /** Stops with a usage error (exit 2). */
  usage(message: string): never
  /** Stops with a failure (exit 1). */
  fail(message: string): never
}

export interface CommandSpec<O extends OptionSpecs, P extends string> {
  /** The words that select the command, e.g. ['admin', 'bootstrap']. */
  path: readonly string[]
  summary: string
  /** More help, shown by `growthdesk help <command>`. */
  details?: readonly string[]
  positionals?: readonly P[]
  options: O
  /** Resolves to the exit code, 0 when omitted; failures are thrown. */
  run(inv: Invocation<O, P>): Promise<number | void>
}

export type Command = CommandSpec<OptionSpecs, string>

/**
 * Infers option and argument types for `run` from the spec, then erases them so that
 * commands of every shape fit one table. The cast is sound because `parseInvocation`
 * builds the values from this same spec.
 */
export function defineCommand<const O extends OptionSpecs, const P extends string = never>(spec: CommandSpec<O, P>): Command {
  return spec as unknown as Command
}
