/** A kernel refused its input (a shape the caller should have validated) or the core could not be used. */
import * as Schema from "effect/Schema"

/** Tagged failure of a kernel call; `kernel` names the entry point. */
export class KernelError extends Schema.TaggedError<KernelError>()("KernelError", {
  kernel: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `kernel ${this.kernel}: ${this.reason}`
  }
}
