/*
 * A client of the metric tracer written against the Level Zero 1.32 headers, in the order of
 * Intel's conformance test "GivenMetricGroupSupportsTracerAndDmaBufAccess...": a group whose
 * sampling type is exactly TRACER_BASED and whose group type is exactly EXPORT_DMA_BUF; its fd
 * and size queried BEFORE activation; the fd imported as is (zeMemAllocDevice + import-fd);
 * activate; tracer create and enable; read; decoder create; decodable metrics; decode; disable;
 * destroy the decoder, then the tracer; free the import; deactivate; disable metrics; destroy
 * the context. Each decoded entry is compared with its raw record (ze-sim's documented format:
 * u64 sequence, u64 timestamp, u64 value, u16 metric, u16 sub-device, u32 tag).
 *
 * With the argument "free-after-deactivate" it deactivates BEFORE freeing the import, which the
 * driver refuses (and reports); it then frees and deactivates again. With "free-first" it frees
 * the import right after decoding, while the tracer is still enabled, then disables, destroys
 * the decoder and the tracer and deactivates (the newer conformance suite frees first: the
 * extension asks only that the free comes before the exporter's teardown).
 *
 * Prints what it did, one line per step; exits 1 at the first unexpected result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ze_api.h>
#include <zet_api.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS) {                                                             \
            printf("FAILED %s: 0x%x\n", #call, (unsigned)r_);                                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t u64_at(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The device's tracer-based group that exports DMA-BUF, selected as the conformance test does. */
static zet_metric_group_handle_t tracer_group(ze_device_handle_t dev) {
    uint32_t n = 0;
    CHECK(zetMetricGroupGet(dev, &n, NULL));
    zet_metric_group_handle_t *groups = calloc(n, sizeof *groups);
    CHECK(zetMetricGroupGet(dev, &n, groups));
    zet_metric_group_handle_t found = NULL;
    for (uint32_t i = 0; i < n && !found; i++) {
        zet_metric_group_type_exp_t type = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP};
        zet_metric_group_properties_t props = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES, .pNext = &type};
        CHECK(zetMetricGroupGetProperties(groups[i], &props));
        if (props.samplingType == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED &&
            type.type == ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF) {
            printf("tracer group %s\n", props.name);
            found = groups[i];
        }
    }
    free(groups);
    return found;
}

int main(int argc, char **argv) {
    int free_after_deactivate = argc > 1 && strcmp(argv[1], "free-after-deactivate") == 0;
    int free_first = argc > 1 && strcmp(argv[1], "free-first") == 0;
    CHECK(zeInit(0));
    uint32_t n = 1;
    ze_driver_handle_t drv;
    CHECK(zeDriverGet(&n, &drv));
    n = 1;
    ze_device_handle_t dev;
    CHECK(zeDeviceGet(drv, &n, &dev));
    zet_metric_group_handle_t group = tracer_group(dev);
    if (!group) {
        printf("FAILED: no tracer-based group exporting DMA-BUF\n");
        return 1;
    }

    /* fd and size before activating; the fd belongs to the driver and is never closed here. */
    zet_export_dma_buf_exp_properties_t dma = {.stype = ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES, .fd = -1};
    zet_metric_group_properties_t props = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES, .pNext = &dma};
    CHECK(zetMetricGroupGetProperties(group, &props));
    if (dma.fd < 0 || dma.size == 0) {
        printf("FAILED: export fd %d size %zu\n", dma.fd, dma.size);
        return 1;
    }
    printf("export fd %d size %zu before activation\n", dma.fd, dma.size);

    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx;
    CHECK(zeContextCreate(drv, &cdesc, &ctx));
    ze_external_memory_import_fd_t import = {
        .stype = ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD, .flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, .fd = dma.fd};
    ze_device_mem_alloc_desc_t adesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, .pNext = &import};
    void *mapped = NULL;
    CHECK(zeMemAllocDevice(ctx, &adesc, dma.size, 4096, dev, &mapped));
    CHECK(zetContextActivateMetricGroups(ctx, dev, 1, &group));

    zet_metric_tracer_exp_desc_t tdesc = {.stype = ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC, .notifyEveryNBytes = 2048};
    zet_metric_tracer_exp_handle_t tracer;
    CHECK(zetMetricTracerCreateExp(ctx, dev, 1, &group, &tdesc, NULL, &tracer));
    CHECK(zetMetricTracerEnableExp(tracer, 1));

    /* Read until the workload has written something (at most 2 s). */
    size_t cap = 1 << 20, size = 0;
    uint8_t *raw = malloc(cap);
    for (int i = 0; i < 200 && size == 0; i++) {
        sleep_ms(10);
        size = cap;
        CHECK(zetMetricTracerReadDataExp(tracer, &size, raw));
    }
    printf("raw bytes %zu\n", size);
    if (size == 0 || size % 32 != 0) {
        printf("FAILED: raw size %zu\n", size);
        return 1;
    }

    zet_metric_decoder_exp_handle_t decoder;
    CHECK(zetMetricDecoderCreateExp(tracer, &decoder));
    uint32_t count = 0;
    CHECK(zetMetricDecoderGetDecodableMetricsExp(decoder, &count, NULL));
    zet_metric_handle_t *metrics = calloc(count, sizeof *metrics);
    CHECK(zetMetricDecoderGetDecodableMetricsExp(decoder, &count, metrics));
    printf("decodable metrics %u\n", count);

    uint32_t sets = 0, entries_n = 0;
    CHECK(zetMetricTracerDecodeExp(decoder, &size, raw, count, metrics, &sets, NULL, &entries_n, NULL));
    uint32_t *per_set = calloc(sets, sizeof *per_set);
    zet_metric_entry_exp_t *entries = calloc(entries_n, sizeof *entries);
    CHECK(zetMetricTracerDecodeExp(decoder, &size, raw, count, metrics, &sets, per_set, &entries_n, entries));
    if (entries_n != size / 32 || sets != 1 || per_set[0] != entries_n) {
        printf("FAILED: %u entries in %u sets from %zu bytes\n", entries_n, sets, size);
        return 1;
    }
    for (uint32_t i = 0; i < entries_n; i++) {
        const uint8_t *rec = raw + 32 * i;
        uint16_t metric;
        memcpy(&metric, rec + 24, sizeof metric);
        if (entries[i].value.ui64 != u64_at(rec + 16) || entries[i].timeStamp != u64_at(rec + 8) ||
            entries[i].metricIndex != metric || entries[i].metricIndex >= count) {
            printf("FAILED: entry %u differs from its record\n", i);
            return 1;
        }
    }
    printf("entries %u match their records\n", entries_n);

    if (free_first) {
        CHECK(zeMemFree(ctx, mapped));
        printf("import freed with the tracer enabled\n");
    }
    CHECK(zetMetricTracerDisableExp(tracer, 1));
    CHECK(zetMetricDecoderDestroyExp(decoder));
    CHECK(zetMetricTracerDestroyExp(tracer));
    if (free_after_deactivate) {
        ze_result_t r = zetContextActivateMetricGroups(ctx, dev, 0, NULL);
        if (r != ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE) {
            printf("FAILED: deactivation with a live import answered 0x%x\n", (unsigned)r);
            return 1;
        }
        printf("deactivation refused while the import lives\n");
        CHECK(zeMemFree(ctx, mapped));
        CHECK(zetContextActivateMetricGroups(ctx, dev, 0, NULL));
    } else {
        if (!free_first) {
            CHECK(zeMemFree(ctx, mapped));
        }
        CHECK(zetContextActivateMetricGroups(ctx, dev, 0, NULL));
    }
    /* Disable metrics on the device (run-time enable/disable, reached by name). */
    ze_result_t (*disable)(zet_device_handle_t) = NULL;
    CHECK(zeDriverGetExtensionFunctionAddress(drv, "zetDeviceDisableMetricsExp", (void **)&disable));
    CHECK(disable(dev));
    CHECK(zeContextDestroy(ctx));
    free(entries);
    free(per_set);
    free(metrics);
    free(raw);
    printf("done\n");
    return 0;
}
