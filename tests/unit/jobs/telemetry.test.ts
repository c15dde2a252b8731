import { metricsUrl, parsePrometheus, sampleOf } from '../../../src/jobs/telemetry';

const VLLM = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="a"} 3.0
vllm:num_requests_running{engine="0",model_name="b"} 2.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="a"} 1.0
vllm:kv_cache_usage_perc{engine="0",model_name="a"} 0.25
vllm:gpu_cache_usage_perc{engine="0",model_name="a"} 0.99
vllm:prefix_cache_queries_total{engine="0",model_name="a"} 1.2345678e+07
vllm:prefix_cache_hits_total{engine="0",model_name="a"} 1e+07
vllm:generation_tokens_total{engine="0",model_name="a"} 500.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="a"} NaN
`;

describe('endpoint telemetry', () => {
  it('sums every series of a metric and reads vLLM names, the current one before the deprecated one', () => {
    const metrics = parsePrometheus(VLLM);
    expect(metrics.get('vllm:num_requests_running')).toBe(5);
    expect(metrics.has('vllm:request_success_total')).toBe(false);
    expect(sampleOf(metrics)).toEqual({ running: 5, waiting: 1, kvCacheUsage: 0.25, prefixQueries: 12345678, prefixHits: 1e7, generationTokens: 500 });
  });

  it("reads SGLang's names, clamps cache use to [0, 1] and finds nothing in other text", () => {
    expect(sampleOf(parsePrometheus('sglang:num_running_reqs{model_name="x"} 7\nsglang:num_queue_reqs 2\nsglang:token_usage 1.7\n'))).toEqual({
      running: 7,
      waiting: 2,
      kvCacheUsage: 1,
      prefixQueries: null,
      prefixHits: null,
      generationTokens: null,
    });
    expect(sampleOf(parsePrometheus('<html>login</html>\nvllm:num_requests_running oops\n'))).toBeNull();
  });

  it('finds /metrics at the root of an OpenAI-compatible base URL', () => {
    expect(metricsUrl('http://gpu1:8000/v1')).toBe('http://gpu1:8000/metrics');
    expect(metricsUrl('https://host/llm/v1/')).toBe('https://host/llm/metrics');
    expect(metricsUrl('http://host:11434')).toBe('http://host:11434/metrics');
  });
});
