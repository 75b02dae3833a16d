/**
 * The shapes of the platform's answers as its clients read them, one per surface envelope, for
 * typing a test's `rest<T>()`/`graphql<T>()` answers: `V1<Task>`, `Gql<{ task: Task }>`, ….
 */

/** An error as most envelopes carry it. */
export interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown> & { traceId?: string; errors?: { field?: string; reason?: string; message?: string }[] };
}

export interface Meta {
  requestId: string;
  timestamp: string;
}

/** `/v1/...`: `{success, data, meta}` or `{success: false, error, meta}`. */
export interface V1<T> {
  success: boolean;
  data: T;
  error: ErrorBody;
  meta: Meta & Record<string, unknown>;
}

/** `/control-plane/api/v1`, `/promptlib/api/v1`, `/engine/api/v1`: `{success, data, metadata}`. */
export interface Platform<T> {
  success: boolean;
  data: T;
  error: ErrorBody;
  metadata: { timestamp: string; request_id: string } & Record<string, unknown>;
}

/** `/links/api/...`: `{success, data}` or `{success: false, error}`. */
export interface Links<T> {
  success: boolean;
  data: T;
  error: ErrorBody;
}

/** `/feedback/api/v1`: `{success, message, data}`; an error's `error` is its code. */
export interface Feedback<T> {
  success: boolean;
  message: string;
  data: T;
  error: string;
  details: Record<string, unknown>;
}

/** `/infra/api/v1` errors (a success is the resource itself, or `{data, pagination}` for lists). */
export interface InfraError {
  error: string;
  message: string;
  details: Record<string, unknown> & { reason?: string; field?: string };
  requestId: string;
  retryAfter?: number;
}

/** A GraphQL answer over HTTP. */
export interface Gql<T> {
  data: T;
  errors?: { message: string; path?: (string | number)[]; extensions: { code: string } & Record<string, unknown> }[];
}
