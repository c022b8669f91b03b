/* A client written against the official Level Zero headers that follows the sample code of the
 * metric export memory extension: query the export properties through the pNext chain BEFORE
 * any activation, import the fd (owned by the implementation: never closed here), free the
 * import. Prints one line per exporter found: "group <name> fd <fd> size <size> magic <hex>",
 * or "metric <name> ..." for per-metric exports. Exit status 0 if everything succeeded. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

/* Not in the 1.8.12 headers: declared from the extension's specification. */
#define ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP ((zet_structure_type_t)0x00010006)
#define ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES ((zet_structure_type_t)0x00010007)
#define ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF (1u << 0)
#define ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF ((zet_metric_type_t)0x7ffffffd)

typedef uint32_t zet_metric_group_type_exp_flags_t;

typedef struct {
    zet_structure_type_t stype;
    void *pNext;
    zet_metric_group_type_exp_flags_t type;
} zet_metric_group_type_exp_t;

typedef struct {
    zet_structure_type_t stype;
    void *pNext;
    int fd;
    size_t size;
} zet_export_dma_buf_exp_properties_t;

#define CHECK(call)                                                                  \
    do {                                                                             \
        ze_result_t r_ = (call);                                                     \
        if (r_ != ZE_RESULT_SUCCESS) {                                               \
            fprintf(stderr, "%s failed: 0x%x (line %d)\n", #call, r_, __LINE__);     \
            return 1;                                                                \
        }                                                                            \
    } while (0)

static int import_and_free(ze_context_handle_t ctx, ze_device_handle_t dev, const char *what, const char *name,
                           zet_export_dma_buf_exp_properties_t *dma) {
    /* Import the dma buf. The fd is owned by the implementation - do not close it. */
    ze_external_memory_import_fd_t importDmaBuf = {
        .stype = ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD,
        .flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF,
        .fd = dma->fd,
    };
    ze_device_mem_alloc_desc_t allocDesc = {
        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
        .pNext = &importDmaBuf,
        .flags = 0,
        .ordinal = 0,
    };
    void *pMappedAddress = NULL;
    CHECK(zeMemAllocDevice(ctx, &allocDesc, dma->size, 4096, dev, &pMappedAddress));
    /* ze-sim maps imports into the host address space, so the header can be read here. */
    printf("%s %s fd %d size %zu magic %08x\n", what, name, dma->fd, dma->size, *(volatile uint32_t *)pMappedAddress);
    /* Release the imported allocation before the exporter is torn down. */
    CHECK(zeMemFree(ctx, pMappedAddress));
    return 0;
}

int main(void) {
    CHECK(zeInit(0));
    uint32_t nd = 1;
    ze_driver_handle_t drv;
    CHECK(zeDriverGet(&nd, &drv));
    uint32_t ndev = 0;
    CHECK(zeDeviceGet(drv, &ndev, NULL));
    ze_device_handle_t devs[8];
    ndev = ndev > 8 ? 8 : ndev;
    CHECK(zeDeviceGet(drv, &ndev, devs));
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx;
    CHECK(zeContextCreate(drv, &cdesc, &ctx));
    int found = 0;
    for (uint32_t d = 0; d < ndev; d++) {
        uint32_t ng = 0;
        CHECK(zetMetricGroupGet(devs[d], &ng, NULL));
        zet_metric_group_handle_t groups[16];
        ng = ng > 16 ? 16 : ng;
        CHECK(zetMetricGroupGet(devs[d], &ng, groups));
        for (uint32_t g = 0; g < ng; g++) {
            /* Request Metric group type using pNext of zet_metric_group_properties_t */
            zet_metric_group_type_exp_t metricGroupType = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP};
            zet_metric_group_properties_t metricGroupProperties = {
                .stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES, .pNext = &metricGroupType};
            CHECK(zetMetricGroupGetProperties(groups[g], &metricGroupProperties));
            if ((metricGroupType.type & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF) != 0) {
                zet_export_dma_buf_exp_properties_t dmaBufProperties = {
                    .stype = ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES, .fd = -1};
                metricGroupProperties.pNext = &dmaBufProperties;
                CHECK(zetMetricGroupGetProperties(groups[g], &metricGroupProperties));
                if (dmaBufProperties.fd < 0) {
                    printf("group %s fd %d (no exported memory)\n", metricGroupProperties.name, dmaBufProperties.fd);
                    continue;
                }
                if (import_and_free(ctx, devs[d], "group", metricGroupProperties.name, &dmaBufProperties))
                    return 1;
                found++;
                continue;
            }
            uint32_t nm = 0;
            CHECK(zetMetricGet(groups[g], &nm, NULL));
            zet_metric_handle_t metrics[64];
            nm = nm > 64 ? 64 : nm;
            CHECK(zetMetricGet(groups[g], &nm, metrics));
            for (uint32_t m = 0; m < nm; m++) {
                zet_metric_properties_t metricProperties = {.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES};
                CHECK(zetMetricGetProperties(metrics[m], &metricProperties));
                if (metricProperties.metricType != ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF)
                    continue;
                zet_export_dma_buf_exp_properties_t dmaBufProperties = {
                    .stype = ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES, .fd = -1};
                metricProperties.pNext = &dmaBufProperties;
                CHECK(zetMetricGetProperties(metrics[m], &metricProperties));
                if (dmaBufProperties.fd < 0)
                    continue;
                if (import_and_free(ctx, devs[d], "metric", metricProperties.name, &dmaBufProperties))
                    return 1;
                found++;
            }
        }
    }
    CHECK(zeContextDestroy(ctx));
    printf("exporters found: %d\n", found);
    return 0;
}
