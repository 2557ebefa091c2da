import type { CustomStepHandler, CustomStepRegistry } from '../usecases/engine/step-context.js';

/** The custom step handlers of this process, registered in code before the worker starts. */
export class CustomSteps implements CustomStepRegistry {
  private readonly handlers = new Map<string, CustomStepHandler>();

  register(name: string, handler: CustomStepHandler): this {
    this.handlers.set(name, handler);
    return this;
  }

  get(name: string): CustomStepHandler | undefined {
    return this.handlers.get(name);
  }
}
