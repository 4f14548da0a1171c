// An operation is defined once — name, description, TypeBox input and output, the role it
// needs, its handler — and every surface (REST routes, /v1/tools, MCP) reaches it here.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import type { ValidateFunction } from 'ajv'
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { Principal, ProjectAccess } from './access.ts'
import { readerOf, roleAtLeast } from './access.ts'
import { appError, invalidArguments, validationFailed, type ErrorDetail } from './errors.ts'
import { serializerOf, strictAjv, validatorOf } from './validation.ts'
import { ProjectRef, roles, type Role } from '../schemas/atoms.ts'
import type { Repositories } from '../db/repositories/index.ts'
import { replicaReadFailed, type ReadChoice } from '../db/replicas.ts'
import { defaultWebhookPolicy, type WebhookPolicy } from './webhooks.ts'
import { disabledMailer, type Mailer } from './mail.ts'
import { unknownToolHint } from './tool-search.ts'
import { isConnectionLost } from '../db/unavailable.ts'
import { publishedAnnotations, publishedOutputSchema, type Annotations, type PublishedAnnotations } from './tool-schemas.ts'

export type { Annotations } from './tool-schemas.ts'

/** Who may call a tool, in MCP Apps' words: the model (the agent) and an app (a view). */
export type ToolVisibility = 'model' | 'app'

/**
 * A tool's MCP App view (the `io.modelcontextprotocol/ui` extension): MCP lists it as the tool's
 * `_meta.ui`, REST as `ui`, the same object. It changes nothing in how the tool is called.
 */
export interface ToolUi {
  /** The view a host renders this tool's results in: a `ui://` resource this server serves. */
  resourceUri: string
  /**
   * Who may call the tool. Absent: both (MCP Apps' default). `['app']`: only views; hosts keep
   * such a tool from the model. Every surface still serves it, with the same checks.
   */
  visibility?: ToolVisibility[]
}

interface Context {
  principal: Principal
  repos: Repositories
  log: FastifyBaseLogger
  now: () => Date
  registry: Registry
  /** Which webhook URLs may be subscribed (the configuration's WEBHOOKS_ALLOW_PRIVATE_NETWORKS). */
  webhookPolicy: WebhookPolicy
  /** Outgoing mail (SMTP_URL): `enabled` is false when none is configured. */
  mail: Mailer
  /** The address clients reach this deployment at (PUBLIC_URL, no trailing slash): links an operation makes start with it. */
  publicUrl: string
  /**
   * Runs another operation as the same caller (a project operation in the same project unless
   * `args.project` names another), with its validation and access checks: how a plugin's tool
   * builds on the tools there are. Resolves to the operation's result.
   */
  call(name: string, args?: Record<string, unknown>): Promise<unknown>
}
export type WorkspaceContext = Context

export type ProjectContext = Context & { project: ProjectAccess }

interface OperationBase<I extends TObject, O extends TSchema> {
  name: string
  title: string
  /** Written for an agent: what it does, when to use it, what it returns. */
  description: string
  input: I
  output: O
  role: Role
  annotations: Annotations
  /** false: reachable only through its own REST route, not listed or callable as a tool. */
  tool?: boolean
  /** Its MCP App view, if a host should render its results in one (routes/mcp-apps.ts serves the views). */
  ui?: ToolUi
  /**
   * Which toolset lists it (default `default`): an MCP `tools/list` lists the `default` toolset
   * unless the client asks for more (`/mcp?toolsets=admin`, `all`), which keeps it small enough
   * for a model's context; `admin` holds the owners' administration (webhooks, keys, projects).
   * Every tool stays callable by name and is listed by `discover_tools` and `GET /v1/tools`.
   */
  toolset?: string
  /** Calls that show and test it: the catalogue, call, era and fuzz suites, SKILL.md and OpenAPI read them. */
  examples: OperationExamples<I>
  /**
   * Where a read-only operation (readOnlyHint true) reads, when read replicas are configured
   * (DATABASE_REPLICA_URLS): `replica` (default) lets it read from a replica that has the
   * caller's own writes; `primary` keeps it on the primary — for one that writes despite its
   * hint (get_retention folds queued rows first) or must see other callers' latest writes.
   * An operation that writes (readOnlyHint false) always runs on the primary.
   */
  reads?: 'replica' | 'primary'
}

/** One call of an operation. Project operations' arguments leave out `project`: every surface adds it. */
export interface ValidExample<I extends TObject> {
  title: string
  args: Static<I>
}
/** A call the input schema refuses, and the argument (a path like `status` or `items[0].event_id`) its error names. */
export interface InvalidExample {
  title: string
  args: Record<string, unknown>
  field: string
}
export interface OperationExamples<I extends TObject> {
  /** At least one call that passes validation. */
  valid: [ValidExample<I>, ...ValidExample<I>[]]
  invalid: InvalidExample[]
}

export interface ProjectOperation<I extends TObject = TObject, O extends TSchema = TSchema> extends OperationBase<I, O> {
  scope: 'project'
  handler(args: Static<I>, ctx: ProjectContext): Promise<Static<O>>
}
export interface WorkspaceOperation<I extends TObject = TObject, O extends TSchema = TSchema> extends OperationBase<I, O> {
  scope: 'workspace'
  handler(args: Static<I>, ctx: WorkspaceContext): Promise<Static<O>>
}
export type Operation = ProjectOperation<any, any> | WorkspaceOperation<any, any>

export function defineOperation<I extends TObject, O extends TSchema>(op: ProjectOperation<I, O>): ProjectOperation<I, O>
export function defineOperation<I extends TObject, O extends TSchema>(op: WorkspaceOperation<I, O>): WorkspaceOperation<I, O>
export function defineOperation(op: Operation): Operation {
  return op
}

/** The published contract of a tool: arguments include `project` for project tools. */
export interface ToolContract {
  name: string
  title: string
  description: string
  /** The toolset that lists it (`default`, `admin`, or a plugin's own). */
  toolset: string
  input_schema: TObject
  /** The output schema as published (core/tool-schemas.ts): it accepts every result the operation's own output schema writes. */
  output_schema: TSchema
  /** MCP's hints (core/tool-schemas.ts: a reader has only `readOnlyHint`). */
  annotations: PublishedAnnotations
  /** Only on tools with a view. */
  ui?: ToolUi
}

/** The toolset of an operation that names none. */
export const DEFAULT_TOOLSET = 'default'
/** What a toolset's name must look like: it goes in a URL (`/mcp?toolsets=admin`). */
export const TOOLSET_NAME = /^[a-z][a-z0-9_]{0,31}$/

/**
 * Which toolsets a listing shows: `all`, or `default` and any others named. Parsed from the
 * `toolsets` parameter (`admin`, `admin,acme`, `all`) by parseToolsets.
 */
export type ToolsetSelection = 'all' | readonly string[]

interface Entry {
  op: Operation
  contract: ToolContract
  validate: ValidateFunction
  /** The output schema compiled (once, on first use): serializes a result and so drops anything it does not declare. */
  serialize: (result: unknown) => string
  checkOutput?: ValidateFunction
}

/** Which surface a call came through: logged with every invocation, never a cause of behaviour. */
export type Surface = 'project-api' | 'tools-api' | 'mcp' | 'console' | 'ingest' | 'cli' | 'operation'

/** Who calls, through which surface, and for which project (from the path or X-Service-Project; `args.project` wins). */
export interface Call {
  principal: Principal
  projectRef?: string | undefined
  surface: Surface
  log: FastifyBaseLogger
  /** Where the calling operation reads (a nested `ctx.call`): a read-only operation it calls reads there too. */
  readFrom?: ReadChoice | undefined
}

/**
 * The call of an authenticated request: its principal and logger, and its project from
 * `projectRef` (a path parameter) or else the X-Service-Project header, the one place that
 * header is read.
 */
export function callOf(request: FastifyRequest, surface: Surface, projectRef?: string): Call {
  const header = request.headers['x-service-project']
  return { principal: request.principal, projectRef: projectRef ?? (typeof header === 'string' ? header : undefined), surface, log: request.log }
}

/** Thrown by `toolFor` and `callTool` for a name the caller's workspace has no tool by: MCP
 * answers it as a protocol error (-32602), REST as the 404 it is. */
export class UnknownToolError extends Error {
  readonly statusCode = 404
  readonly code = 'GD_NOT_FOUND'
  readonly tool: string
  constructor(tool: string, message: string) {
    super(message)
    this.name = 'UnknownToolError'
    this.tool = tool
  }
}

/** What a tool name must look like: it is a path segment and an MCP tool name. */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/

/** Why an operation cannot be registered, or null: checked when it is added, so a plugin's
 * mistake stops the start with a reason instead of failing its first call. */
function operationProblem(op: Partial<Operation> | null | undefined): string | null {
  if (!op || typeof op !== 'object') return 'is not an operation object (pass what defineOperation returns)'
  if (typeof op.name !== 'string' || !TOOL_NAME.test(op.name)) return `has the name ${JSON.stringify(op.name)}: a name is snake_case, a lower-case letter then up to 63 of a-z, 0-9 and _`
  if (op.scope !== 'project' && op.scope !== 'workspace') return `'${op.name}' has scope ${JSON.stringify(op.scope)}: it must be 'project' or 'workspace'`
  if (!roles.includes(op.role as Role)) return `'${op.name}' has role ${JSON.stringify(op.role)}: it must be one of ${roles.join(', ')}`
  if (typeof op.handler !== 'function') return `'${op.name}' has no handler function`
  if (typeof op.title !== 'string' || op.title === '' || typeof op.description !== 'string' || op.description === '') return `'${op.name}' needs a title and a description`
  if (!op.input || (op.input as TSchema).type !== 'object') return `'${op.name}' has an input that is not a TypeBox object (Type.Object)`
  if (!op.output || typeof op.output !== 'object') return `'${op.name}' has no output schema`
  if (!op.annotations || typeof op.annotations.readOnlyHint !== 'boolean') return `'${op.name}' needs annotations (readOnlyHint, destructiveHint, idempotentHint)`
  if (op.toolset !== undefined && (typeof op.toolset !== 'string' || !TOOLSET_NAME.test(op.toolset) || op.toolset === 'all')) return `'${op.name}' has the toolset ${JSON.stringify(op.toolset)}: a toolset is a lower-case name such as 'default' or 'admin' (not 'all')`
  if (op.reads !== undefined && op.reads !== 'replica' && op.reads !== 'primary') return `'${op.name}' has reads ${JSON.stringify(op.reads)}: it must be 'replica' or 'primary'`
  if (op.ui !== undefined) return uiProblem(op.name, op.ui)
  return null
}

const VISIBILITIES: readonly ToolVisibility[] = ['model', 'app']

/** Why a tool's `ui` is not one MCP Apps can carry, or null. */
function uiProblem(name: string, ui: ToolUi): string | null {
  if (!ui || typeof ui !== 'object' || typeof ui.resourceUri !== 'string' || !/^ui:\/\/[^\s]+$/.test(ui.resourceUri)) {
    return `'${name}' has a ui without a ui:// resourceUri (the view a host renders its results in)`
  }
  const { visibility } = ui
  if (visibility !== undefined && (!Array.isArray(visibility) || visibility.length === 0 || new Set(visibility).size !== visibility.length || visibility.some((v) => !VISIBILITIES.includes(v)))) {
    return `'${name}' has the ui visibility ${JSON.stringify(visibility)}: it must list 'model' and/or 'app', each once`
  }
  return null
}

/** What makes a string unstorable: PostgreSQL text holds no U+0000 and only well-formed Unicode. */
function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)'
  if (!text.isWellFormed()) return 'must be valid Unicode text: it contains a lone surrogate (\\ud800–\\udfff without its pair)'
  return null
}

/**
 * The first value anywhere in the arguments (keys too) that JSON text cannot hold, with the
 * reason: a string with a NUL or a lone surrogate, or a number that is not finite (a body's
 * 1e999, which the arguments' JSON copy would turn into null, and a nullable field would take).
 */
function findBadText(value: unknown, path: string): ErrorDetail | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : { path, message: 'must be a finite number' }
  if (typeof value === 'string') {
    const problem = textProblem(value)
    return problem ? { path, message: problem } : null
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBadText(value[i], `${path}[${i}]`)
      if (found !== null) return found
    }
    return null
  }
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key
      const problem = textProblem(key)
      if (problem) return { path: here, message: `(the name) ${problem}` }
      const found = findBadText(v, here)
      if (found !== null) return found
    }
  }
  return null
}

/** A mistake in registering an operation: its message is one line, fit for a start-up error. */
export class RegistryError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RegistryError'
  }
}

function stripIds(schema: TSchema): TSchema {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' || key === '$schema' ? undefined : value)))
}

interface RegistryDeps {
  repos: Repositories
  now: () => Date
  /** Check every result against its output schema and fail loudly (tests turn this on). */
  checkOutputs?: boolean
  webhookPolicy?: WebhookPolicy
  /** The mailer operations send with (default: none configured). */
  mail?: Mailer
  /** PUBLIC_URL (default http://127.0.0.1:3000). */
  publicUrl?: string
  /** Read replicas (db/replicas.ts ReadRouter): absent, every operation runs on `repos`. */
  reads?: ReadRouting
}

/** What the registry needs of the read replicas' router (db/replicas.ts ReadRouter). */
export interface ReadRouting {
  /** Where a read of this reader may go: a replica past the reader's latest write, or the primary. */
  choose(reader: string): Promise<ReadChoice>
  /** The reader has written (committed): its later reads must see it. */
  marked(reader: string): Promise<void>
  readonly primary: ReadChoice
}

/** A project operation that writes has succeeded (its changes are committed). */
export interface ProjectChange {
  operation: string
  projectId: string
}

export class Registry {
  private readonly entries = new Map<string, Entry>()
  private isSealed = false
  private readonly changeListeners: ((change: ProjectChange) => void)[] = []

  private readonly deps: RegistryDeps
  constructor(deps: RegistryDeps) {
    this.deps = deps
  }

  /**
   * Registers an operation (what `defineOperation` returns). Only while the app loads: once
   * sealed, the registry is what every surface was built from, and `add` throws.
   */
  add(op: Operation): void {
    if (this.isSealed) throw new RegistryError(`cannot add the operation '${op?.name}': operations are added while the app loads, and it is ready (the registry is sealed)`)
    const problem = operationProblem(op)
    if (problem) throw new RegistryError(`the operation ${problem}`)
    if (this.entries.has(op.name)) throw new RegistryError(`an operation named '${op.name}' exists already`)
    const input =
      op.scope === 'project'
        ? Type.Object({ project: Type.Optional(ProjectRef), ...op.input.properties }, {
          additionalProperties: false,
          ...(op.input.description ? { description: op.input.description } : {}),
        })
        : op.input
    const output = stripIds(op.output)
    const contract: ToolContract = {
      name: op.name,
      title: op.title,
      description: op.description,
      toolset: op.toolset ?? DEFAULT_TOOLSET,
      input_schema: stripIds(input) as TObject,
      output_schema: publishedOutputSchema(output),
      annotations: publishedAnnotations(op.annotations),
      ...(op.ui ? { ui: structuredClone(op.ui) } : {}),
    }
    this.entries.set(op.name, {
      op,
      contract,
      validate: validatorOf(strictAjv, contract.input_schema),
      // Results are written and checked by the operation's full output schema.
      serialize: serializerOf(output),
      checkOutput: this.deps.checkOutputs ? validatorOf(strictAjv, output) : undefined,
    })
  }

  /**
   * Tells `listener` of every project operation that writes (readOnlyHint false) once it has
   * succeeded, on every surface: how work that follows a change (alerts) hears of it. A listener
   * only schedules its work; it must neither wait nor throw (a throw is logged, the call stands).
   */
  onProjectChange(listener: (change: ProjectChange) => void): void {
    this.changeListeners.push(listener)
  }

  /** Closes the registry: every surface is built from what it holds now. */
  seal(): void {
    this.isSealed = true
  }

  get sealed(): boolean {
    return this.isSealed
  }

  /** Every operation, tools or not, in registration order. */
  operations(): Operation[] {
    return [...this.entries.values()].map((e) => e.op)
  }

  /** An operation by name. */
  operation(name: string): Operation {
    const entry = this.entries.get(name)
    if (!entry) throw new Error(`There is no operation named ${name}`)
    return entry.op
  }

  /** A tool's valid examples as a caller sends them (`project` first for project tools,
   * `my-project` standing for the caller's own): OpenAPI shows them, SKILL.md the first. */
  exampleArgs(name: string): Record<string, unknown>[] {
    const op = this.entries.get(name)?.op
    if (!op) return []
    return op.examples.valid.map(({ args }) => (op.scope === 'project' ? { project: 'my-project', ...args } : { ...args }))
  }

  contract(name: string): ToolContract | undefined {
    return this.entries.get(name)?.contract
  }

  /** The tools (operations exposed as tools) minus those given, in registration order; only
   * those of the selected toolsets (default: all). */
  contracts(disabled: readonly string[] = [], toolsets: ToolsetSelection = 'all'): ToolContract[] {
    return [...this.entries.values()]
      .filter((e) => e.op.tool !== false && !disabled.includes(e.op.name) && (toolsets === 'all' || toolsets.includes(e.contract.toolset)))
      .map((e) => e.contract)
  }

  /** Every toolset of the tools, `default` first, then in the order they first appear. */
  toolsets(): string[] {
    return [...new Set([DEFAULT_TOOLSET, ...this.contracts().map((c) => c.toolset)])]
  }

  /**
   * The selection a `toolsets` parameter asks for: undefined or '' → the default toolset;
   * `all` → every one; otherwise `default` and the comma-separated names, each a toolset the
   * tools have (an unknown name is an InvalidArguments naming the toolsets there are).
   */
  parseToolsets(value: string | undefined): ToolsetSelection {
    if (value === undefined || value.trim() === '') return [DEFAULT_TOOLSET]
    const names = value.split(',').map((n) => n.trim()).filter(Boolean)
    if (names.includes('all')) return 'all'
    const known = this.toolsets()
    const unknown = names.filter((n) => !known.includes(n))
    if (unknown.length > 0) {
      throw invalidArguments([{ path: 'toolsets', message: `names no toolset: ${unknown.join(', ')}` }],
        `Unknown toolset ${unknown.map((n) => `'${n.slice(0, 40)}'`).join(', ')}: the toolsets are ${known.join(', ')} (or all).`)
    }
    return [...new Set([DEFAULT_TOOLSET, ...names])]
  }

  /** Names of every tool, enabled or not. */
  names(): string[] {
    return [...this.entries.values()].filter((e) => e.op.tool !== false).map((e) => e.op.name)
  }

  /** The one answer to "which tools does this workspace have": every tool it has not disabled
   * (of the selected toolsets; default: all). */
  async toolsFor(principal: Principal, toolsets: ToolsetSelection = 'all'): Promise<ToolContract[]> {
    const disabled = await this.deps.repos.workspaces.disabledTools(principal.workspaceId)
    return this.contracts(disabled, toolsets)
  }

  /** A tool the caller's workspace has, or NotFound (unknown, not a tool, or disabled there). */
  async toolFor(principal: Principal, name: string): Promise<Operation> {
    const entry = this.entries.get(name)
    const disabled = await this.deps.repos.workspaces.disabledTools(principal.workspaceId)
    if (entry && entry.op.tool !== false && !disabled.includes(name)) return entry.op
    // The same message on every surface: the closest names the workspace has, and discover_tools.
    const hint = unknownToolHint(name, this.contracts(disabled))
    const known = entry && entry.op.tool !== false
    throw new UnknownToolError(name, `There is no tool named '${name}'${known ? ' enabled in this workspace' : ''}. ${hint}`)
  }

  /**
   * The one way a tool is called, on every surface (/v1/tools, MCP and its fast lane): finds the
   * tool the caller's workspace has (UnknownToolError if none), runs it, and answers its result
   * as the output schema writes it, the same bytes everywhere.
   */
  async callTool(name: string, args: unknown, call: Call): Promise<string> {
    const op = await this.toolFor(call.principal, name)
    return this.entry(op).serialize(await this.invoke(op, args, call))
  }

  private entry(op: Operation): Entry {
    const entry = this.entries.get(op.name)
    if (!entry || entry.op !== op) throw new Error(`Operation ${op.name} is not registered`)
    return entry
  }

  /** The one way in: validates the arguments, resolves the project and the caller's role, runs the handler. */
  async invoke<O extends Operation>(op: O, rawArgs: unknown, call: Call): Promise<Static<O['output']>> {
    const entry = this.entry(op)
    // The caller's arguments are not changed (validation fills in defaults): a copy, made by a
    // JSON round trip — arguments are JSON values on every surface, and it keeps a "__proto__"
    // key an own property — at a fraction of structuredClone's cost. What JSON cannot hold is
    // looked for in the caller's arguments, before the copy hides a non-finite number as null.
    const args = (rawArgs == null ? {} : JSON.parse(JSON.stringify(rawArgs))) as Record<string, unknown>
    if (typeof args !== 'object' || Array.isArray(args)) {
      throw invalidArguments([{ path: '', message: 'must be a JSON object of arguments' }])
    }
    const bad = findBadText(rawArgs, '')
    if (bad !== null) throw invalidArguments([bad])
    if (!entry.validate(args)) throw validationFailed(entry.validate.errors ?? [])
    call.log.debug({ operation: op.name, surface: call.surface }, 'operation called')
    // The access check reads the primary (through the cache), wherever the work reads.
    const project = op.scope === 'project' ? await this.project(op, args, call) : undefined
    const reads = this.deps.reads
    const run = (from: ReadChoice | undefined) => {
      const ctx: Context = {
        principal: call.principal,
        repos: from?.repos ?? this.deps.repos,
        log: call.log,
        now: this.deps.now,
        registry: this,
        webhookPolicy: this.deps.webhookPolicy ?? defaultWebhookPolicy,
        mail: this.deps.mail ?? disabledMailer,
        publicUrl: this.deps.publicUrl ?? 'http://127.0.0.1:3000',
        call: (name, nested = {}) => this.invoke(this.operation(name), nested,
          { principal: call.principal, projectRef: project?.id ?? call.projectRef, surface: 'operation', log: call.log, readFrom: from }),
      }
      return op.scope === 'workspace' ? op.handler(args as never, ctx) : op.handler(args as never, { ...ctx, project: project! })
    }
    let result: unknown
    // A write is never run twice (it may have committed): a lost connection is answered 503.
    if (!op.annotations.readOnlyHint) result = await run(reads?.primary)
    else {
      // A nested call reads where its caller does; a call from a surface, where the router says.
      const from = !reads ? undefined : op.reads === 'primary' ? reads.primary : call.readFrom ?? await reads.choose(readerOf(call.principal))
      try {
        result = await run(from)
      } catch (err) {
        // The connection went away under the read (a replica that went down, or a connection the
        // primary had just dropped; not a mistake of the query): once more, on the primary.
        if (!(from?.replica ? replicaReadFailed(err) : isConnectionLost(err))) throw err
        call.log.warn({ err, operation: op.name, replica: from?.replica ?? null }, 'a read lost its database connection: it is run once more, on the primary')
        result = await run(reads?.primary)
      }
    }
    if (entry.checkOutput && !entry.checkOutput(result)) {
      throw new Error(`${op.name} returned a result outside its output schema: ${JSON.stringify(entry.checkOutput.errors)}`)
    }
    if (reads && !op.annotations.readOnlyHint) {
      // Committed: from now on this caller's reads, on any instance, wait for a replica past it.
      // A mark that cannot be written does not undo the write (an answer of error would invite
      // the caller to repeat it): it is logged, and the caller may read its past for a moment.
      await reads.marked(readerOf(call.principal)).catch((err) => call.log.error({ err, operation: op.name }, 'could not record a write for read-your-writes'))
    }
    if (project && !op.annotations.readOnlyHint) {
      for (const listener of this.changeListeners) {
        try {
          listener({ operation: op.name, projectId: project.id })
        } catch (err) {
          call.log.error({ err, operation: op.name }, 'a listener of project changes failed')
        }
      }
    }
    return result as Static<O['output']>
  }

  private async project(op: Operation, args: Record<string, unknown>, call: Call): Promise<ProjectAccess> {
    const ref = (args.project as string | undefined) ?? call.projectRef
    delete args.project
    // A reference from a path or a header that no project can have (over 100 characters, a NUL,
    // broken Unicode) names no project.
    if (ref && (ref.length > 100 || textProblem(ref))) throw appError('NotFound', 'No project has that id or slug.')
    if (!ref) {
      throw invalidArguments(
        [{ path: 'project', message: 'is required: send `project` (id or slug) or the X-Service-Project header' }],
        // An operation that is not a tool (recording events) is not named: a caller never sees that name.
        `${op.tool === false ? 'This call' : `The tool '${op.name}'`} needs a project: send \`project\` (id or slug) in the arguments or the X-Service-Project header.`
      )
    }
    const project = await this.deps.repos.projects.access(call.principal, ref)
    if (!project) throw appError('NotFound', `Project '${ref}' was not found.`)
    if (!roleAtLeast(project.role, op.role)) {
      throw op.role === 'reviewer'
        ? appError('ReviewAccessRequired', `This needs review access to project '${project.slug}'; your access is ${project.role}.`)
        : appError('Forbidden', `This needs the ${op.role} role in project '${project.slug}'; your access is ${project.role}.`)
    }
    return project
  }
}

/** What a tool plugin sees as `app.operations`: it adds operations while it loads. */
export interface OperationAdder {
  /** Registers an operation (what `defineOperation` returns); throws once the app is ready. */
  add(op: Operation): void
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Inside a tool plugin (docs/extending.md): where it adds its operations. */
    operations: OperationAdder
  }
}

/**
 * A tool plugin: an ordinary Fastify plugin, its module's default export, that calls
 * `app.operations.add(op)` for each operation it brings (and may declare routes of its own).
 */
export type ToolPlugin<Options extends Record<string, unknown> = Record<string, never>> = FastifyPluginAsync<Options>
