/** Where workflow code and expressions run: an isolated V8 heap in this process or in a child process, with n8n's expression functions preloaded (prelude/). */

export { CODE_LIMITS, type CodeRunner, EXPRESSION_LIMITS, type Prelude, Sandbox, SandboxError } from './isolate';
export { EXPRESSION_ERROR_KEY, EXTENSION_NAMES, PRELUDE_KEY, type PreludeApi } from './prelude/prelude';
export { ProcessSandbox } from './process';
