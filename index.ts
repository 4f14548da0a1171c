// growthdesk as a package: what a tool plugin imports (`import { defineOperation, Type } from
// 'growthdesk'`) and what embeds the app in code. docs/extending.md is the guide.
export { defineOperation, RegistryError, TOOL_NAME } from './core/operations.ts'
export type {
  Annotations,
  InvalidExample,
  Operation,
  OperationAdder,
  OperationExamples,
  ProjectContext,
  ProjectOperation,
  ToolPlugin,
  ValidExample,
  WorkspaceContext,
  WorkspaceOperation,
} from './core/operations.ts'
export { appError } from './core/errors.ts'
export type { ErrorBody, ErrorDetail } from './core/errors.ts'
export type { Principal, ProjectAccess } from './core/access.ts'
export { StringEnum } from './schemas/atoms.ts'
// TypeBox itself, so a plugin builds its schemas with the very TypeBox growthdesk validates them with.
export { Type } from '@sinclair/typebox'
export type { Static, TObject, TSchema } from '@sinclair/typebox'
export { buildApp } from './app.ts'
export type { BuildOptions } from './app.ts'
export { loadConfig, ConfigError } from './config.ts'
export type { Config } from './config.ts'
export { PluginError } from './plugins/tool-plugins.ts'
export type { PluginSource } from './plugins/tool-plugins.ts'
