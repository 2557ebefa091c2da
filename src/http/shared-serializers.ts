import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/**
 * Fastify's serializer builder, except that equal response schemas share one serializer. Fastify compiles a
 * fast-json-stringify function for every route and status code, each with generated source, code and an Ajv instance
 * of its own: with eleven error statuses on ~150 routes that was ~1,700 serializers and ~45 MB of an idle process's
 * heap, most of them the same ErrorBody serializer. A serializer depends only on its schema, the shared schemas
 * (`addSchema`) and the serializer options, so one per distinct triple answers the same bytes. Fastify asks this
 * builder for a new compiler whenever a context has added schemas (the root context asks again for each route), so
 * the cache lives in the builder, keyed by all three.
 */
export function sharedSerializerBuilder(): SerializerFactory {
  const buildDefault = SerializerSelector();
  const serializers = new Map<string, Serializer>();
  return (externalSchemas, options) => {
    const compile = buildDefault(externalSchemas, options);
    const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
    return (route) => {
      const key = `${context}\n${JSON.stringify(route.schema)}`;
      let serializer = serializers.get(key);
      if (!serializer) {
        serializer = compile(route);
        serializers.set(key, serializer);
      }
      return serializer;
    };
  };
}
